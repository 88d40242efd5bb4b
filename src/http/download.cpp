// Beast side of the streaming download (download.hpp): one GET per attempt on a fresh
// connection made by http::connect() (proxies, TLS verification and SNI as every SDK request),
// the body read through a fixed 64 KiB buffer_body and appended to the file chunk by chunk.
#include "http/download.hpp"

#include "http/connection.hpp"
#include "http/connection_stream.hpp"
#include "http/error_mapping.hpp"
#include "http/headers.hpp"
#include "http/proxy.hpp"
#include "http/retry_policy.hpp"
#include "http/tls.hpp"
#include "http/url.hpp"

#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using boost::system::error_code;

constexpr std::size_t chunk_size = 64 * 1024;
constexpr std::uint32_t header_limit = 64 * 1024;
constexpr std::uint64_t progress_bytes = 64 * 1024;
constexpr std::chrono::milliseconds progress_interval{100};

// The file being written: created or appended to, reopened truncated on a restart.
class OutputFile {
 public:
  OutputFile(std::filesystem::path path, std::uint64_t keep) : path_(std::move(path)) {
    if (keep == 0) {
      open("wb");
      return;
    }
    std::error_code ec;
    std::filesystem::resize_file(path_, keep, ec);  // drop anything written after the last counted byte
    if (ec) fail(ec.message());
    open("ab");
  }
  ~OutputFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void restart() {
    std::fclose(file_);
    file_ = nullptr;
    open("wb");
  }
  void write(const char* data, std::size_t size) {
    if (size != 0 && std::fwrite(data, 1, size, file_) != size) fail(std::strerror(errno));
  }
  void flush() {
    if (std::fflush(file_) != 0) fail(std::strerror(errno));
  }

 private:
  void open(const char* mode) {
    file_ = std::fopen(path_.c_str(), mode);
    if (file_ == nullptr) fail(std::strerror(errno));
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw error(errc::invalid_argument, "cannot write " + path_.string() + ": " + why);
  }

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

class Progress {
 public:
  explicit Progress(const DownloadRequest& request) : callback_(request.on_progress) {}
  void bytes_arrived(const DownloadState& state) {
    if (!callback_) return;
    const auto now = std::chrono::steady_clock::now();
    if (state.bytes_done < last_bytes_ + progress_bytes && now - last_time_ < progress_interval) return;
    last_bytes_ = state.bytes_done;
    last_time_ = now;
    callback_(state);
  }
  void restarted() { last_bytes_ = 0; }

 private:
  const std::function<void(const DownloadState&)>& callback_;
  std::uint64_t last_bytes_ = 0;
  std::chrono::steady_clock::time_point last_time_ = std::chrono::steady_clock::now();
};

// How one attempt (one GET) ended.
enum class Step { done, dropped, transient_status, failed, redirect };

class AttemptResult {
 public:
  AttemptResult() = default;
  Step step = Step::done;
  DownloadOutcome outcome;  ///< the error for failed / transient_status / dropped
  std::string location;     ///< for redirect: the Location header
};

// One GET as sent: where to, whether the Authorization value goes along, whether a redirect
// answer is to be followed, and the kept response headers met so far along the redirect chain.
class Exchange {
 public:
  Exchange(const DownloadRequest& request_, AbsoluteUrl target_) : request(request_), target(std::move(target_)) {}

  const DownloadRequest& request;
  AbsoluteUrl target;
  bool send_authorization = true;
  bool may_redirect = false;
  std::vector<std::pair<std::string, std::string>> headers;

  template <class Fields>
  void keep_headers(const Fields& head) {
    for (const std::string& name : request.keep_headers) {
      const bool known =
          std::any_of(headers.begin(), headers.end(), [&](const auto& kept) { return kept.first == name; });
      if (known) continue;
      const auto it = head.find(name);
      if (it != head.end()) headers.emplace_back(name, std::string(it->value()));
    }
  }
};

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// RFC 3986 section 5.2 for the forms servers send: absolute, scheme-relative, path-absolute and
// path-relative references (no dot-segment removal: a server that sends "../" gets it as is).
std::string resolve_location(const AbsoluteUrl& base, std::string_view location) {
  if (location.starts_with("http://") || location.starts_with("https://")) return std::string(location);
  const std::string scheme = base.endpoint.tls ? "https:" : "http:";
  if (location.starts_with("//")) return scheme + std::string(location);
  if (location.starts_with("/")) return base.origin_key + std::string(location);
  std::string directory = base.path.substr(0, base.path.find('?'));
  directory.erase(directory.rfind('/') + 1);
  return base.origin_key + directory + std::string(location);
}

AttemptResult finished(Step step, error_code ec, std::string reason, int status = 0, std::string request_id = {}) {
  AttemptResult result;
  result.step = step;
  result.outcome.error = ec;
  result.outcome.reason = std::move(reason);
  result.outcome.http_status = status;
  result.outcome.request_id = std::move(request_id);
  return result;
}

AttemptResult dropped(const error_code& ec, std::string what) {
  if (ec == asio::error::operation_aborted)
    return finished(Step::failed, make_error_code(errc::cancelled), "cancelled");
  if (ec == beast::error::timeout) {
    return finished(Step::dropped, make_error_code(errc::timeout), what + ": no data within the read timeout");
  }
  return finished(Step::dropped, make_error_code(errc::connection_failed), what + ": " + ec.message());
}

bool transient(int status) {
  return status == 408 || status == 429 || status >= 500;
}
bool url_rejected(int status) {
  return status == 403 || status == 404 || status == 410;
}

// Checks the answer's status and headers against what was asked; sets the total and restarts
// the file on a 200 to a Range request. A result with step `done` means "read the body".
template <class Parser>
AttemptResult accept_head(const Parser& parser, const AbsoluteUrl& target, bool ranged, bool may_redirect,
                          DownloadState& state, OutputFile& file, Progress& progress) {
  const auto& head = parser.get();
  const int status = static_cast<int>(head.result_int());
  std::string request_id(head["x-request-id"]);
  const std::string from = "the download from " + target.display;
  if (status == 200) {
    if (ranged) {  // the server ignored Range: start over (RFC 9110 section 14.2)
      file.restart();
      state.bytes_done = 0;
      progress.restarted();
    }
    const auto length = parser.content_length();
    state.total = length ? std::optional<std::uint64_t>(*length) : std::nullopt;
    return AttemptResult();
  }
  if (status == 206) {
    const std::string_view value = head["content-range"];
    const auto range = parse_content_range(value);
    const auto length = parser.content_length();
    const bool matches = ranged && range && range->first == state.bytes_done && range->total &&
                         range->last < *range->total && (!state.total || *state.total == *range->total) &&
                         (!length || *length == range->last - range->first + 1);
    if (!matches) {
      return finished(Step::failed, make_error_code(errc::protocol_error),
                      from + " answered 206 with Content-Range '" + std::string(value) +
                          "', which does not continue at byte " + std::to_string(state.bytes_done),
                      status, std::move(request_id));
    }
    state.total = *range->total;
    return AttemptResult();
  }
  const std::string answered = from + " answered HTTP " + std::to_string(status);
  if (may_redirect && is_redirect(status) && !head[bhttp::field::location].empty()) {
    AttemptResult result = finished(Step::redirect, {}, answered, status, std::move(request_id));
    result.location = std::string(head[bhttp::field::location]);
    return result;
  }
  if (transient(status))
    return finished(Step::transient_status, error_for_status(status), answered, status, request_id);
  AttemptResult result = finished(Step::failed, error_for_status(status), answered, status, std::move(request_id));
  result.outcome.url_rejected = url_rejected(status);
  return result;
}

template <class Stream>
asio::awaitable<AttemptResult> attempt_on(Stream& stream, Connection& connection, Exchange& exchange,
                                          const DownloadTransport& transport, bool ranged, DownloadState& state,
                                          OutputFile& file, Progress& progress) {
  const AbsoluteUrl& target = exchange.target;
  beast::tcp_stream& tcp = connection.tcp();
  tcp.expires_after(transport.read_timeout);
  auto [write_error, written] = co_await asio::async_write(stream, asio::buffer(connection.head), as_tuple_awaitable);
  (void)written;
  if (write_error)
    co_return dropped(write_error, "sending the request to " + target.endpoint.host_header() + " failed");

  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.header_limit(header_limit);
  // Explicit, as every parser's body limit is (Beast's default is 8 MB,
  // doc/architecture.md#toolchain-rules): no limit, the body goes to a file in constant memory and
  // its size is checked against Content-Length / Content-Range.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  tcp.expires_after(transport.read_timeout);
  auto [head_error, head_read] =
      co_await bhttp::async_read_header(stream, connection.buffer, parser, as_tuple_awaitable);
  (void)head_read;
  if (head_error == bhttp::error::header_limit || head_error == bhttp::error::buffer_overflow) {
    co_return finished(Step::failed, make_error_code(errc::response_too_large),
                       "the download from " + target.display + " sent headers over the limit");
  }
  if (head_error) co_return dropped(head_error, "reading the answer of " + target.endpoint.host_header() + " failed");

  exchange.keep_headers(parser.get());
  AttemptResult checked = accept_head(parser, target, ranged, exchange.may_redirect, state, file, progress);
  if (checked.step != Step::done) co_return checked;

  std::vector<char> chunk(chunk_size);
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    tcp.expires_after(transport.read_timeout);
    auto [read_error, read] = co_await bhttp::async_read(stream, connection.buffer, parser, as_tuple_awaitable);
    (void)read;
    const std::size_t got = chunk.size() - parser.get().body().size;
    file.write(chunk.data(), got);
    state.bytes_done += got;
    if (got != 0) progress.bytes_arrived(state);
    if (read_error && read_error != bhttp::error::need_buffer) {
      file.flush();
      co_return dropped(read_error, "the connection to " + target.endpoint.host_header() + " dropped mid-body");
    }
  }
  tcp.expires_never();
  file.flush();
  co_return AttemptResult();
}

std::string request_head(const Exchange& exchange, const DownloadTransport& transport, bool ranged,
                         std::uint64_t from_byte) {
  // Nothing but these: a signed URL gets no credentials (the checkpoint archive's signed URL
  // carries its own; its request has no authorization value), and Accept-Encoding is left out
  // so the bytes counted are the file's own.
  const AbsoluteUrl& target = exchange.target;
  std::string head = "GET " + target.path + " HTTP/1.1\r\n";
  append_header_line(head, "Host", target.endpoint.host_header());
  append_header_line(head, "User-Agent", transport.user_agent);
  append_header_line(head, "Accept", "*/*");
  if (exchange.send_authorization && !exchange.request.authorization.empty()) {
    append_header_line(head, "Authorization", exchange.request.authorization.reveal());
  }
  if (ranged) append_header_line(head, "Range", "bytes=" + std::to_string(from_byte) + "-");
  append_header_line(head, "Connection", "close");
  head += "\r\n";
  return head;
}

asio::awaitable<AttemptResult> attempt(DownloadTransport& transport, Exchange& exchange, DownloadState& state,
                                       OutputFile& file, Progress& progress) {
  const AbsoluteUrl& target = exchange.target;
  const auto executor = co_await asio::this_coro::executor;
  const ConnectSettings settings = connect_settings_for(transport, target.endpoint.tls);
  ConnectResult connected = co_await connect(executor, target.endpoint, settings);
  if (connected.error == errc::cancelled) co_return finished(Step::failed, connected.error, "cancelled");
  if (connected.error == errc::tls_error) co_return finished(Step::failed, connected.error, connected.reason);
  if (connected.error) co_return finished(Step::dropped, connected.error, connected.reason);

  auto& connection = static_cast<Connection&>(*connected.connection);
  const bool ranged = state.bytes_done > 0;
  connection.head = request_head(exchange, transport, ranged, state.bytes_done);
  AttemptResult result;
  if (TlsStream* tls = connection.tls()) {
    result = co_await attempt_on(*tls, connection, exchange, transport, ranged, state, file, progress);
  } else {
    result = co_await attempt_on(*connection.plain(), connection, exchange, transport, ranged, state, file, progress);
  }
  connection.close();
  co_return result;
}

DownloadOutcome out_of_resumes(const DownloadRequest& request, const DownloadState& state, DownloadOutcome last) {
  if (state.total && state.bytes_done < *state.total) {
    last.error = make_error_code(errc::request_failed);
    last.reason = "the download is incomplete: " + std::to_string(state.bytes_done) + " of " +
                  std::to_string(*state.total) + " bytes arrived, and the connection dropped again after " +
                  std::to_string(request.max_resumes) + " resumptions (" + last.reason + ")";
  }
  return last;
}

}  // namespace

ConnectSettings connect_settings_for(DownloadTransport& transport, bool https) {
  ConnectSettings settings;
  settings.connect_timeout = transport.connect_timeout;
  settings.verify_peer = transport.tls.verify_peer;
  settings.proxy = transport.proxy.get();
  if (https && !transport.tls_context) transport.tls_context = make_tls_context(transport.tls);
  settings.tls_context = transport.tls_context;
  return settings;
}

DownloadTransport::DownloadTransport(const ClientOptions& options)
    : tls(options.tls),
      connect_timeout(options.timeouts.connect),
      read_timeout(options.timeouts.request),
      proxy(std::make_shared<const ProxySettings>(ProxySettings::from_environment())) {
  for (const Header& header : standard_headers(options)) {
    if (header.name == "User-Agent") user_agent = header.value;
  }
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  constexpr std::string_view unit = "bytes ";
  if (!value.starts_with(unit)) return std::nullopt;
  value.remove_prefix(unit.size());
  const auto number = [&value](std::uint64_t& out, char end) {
    const char* last = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), last, out);
    if (ec != std::errc() || ptr == value.data() || ptr == last || *ptr != end) return false;
    value.remove_prefix(static_cast<std::size_t>(ptr - value.data()) + 1);
    return true;
  };
  ContentRange range;
  if (!number(range.first, '-') || !number(range.last, '/') || range.last < range.first) return std::nullopt;
  if (value == "*") return range;
  std::uint64_t total = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), total);
  if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) return std::nullopt;
  // A range ending at or past its total is invalid (RFC 9110 14.4); it was accepted until fuzzing found it.
  if (range.last >= total) return std::nullopt;
  range.total = total;
  return range;
}

asio::awaitable<DownloadOutcome> download_to_file(DownloadTransport& transport, Clock& clock,
                                                  const DownloadRequest& request, DownloadState& state) {
  const AbsoluteUrl start = parse_absolute_url(request.url, "download URL");
  OutputFile file(request.file, state.bytes_done);
  Progress progress(request);
  // No jitter and no cap: retry_delay, then twice that, and so on (download.hpp).
  const Backoff backoff(request.retry_delay);
  Exchange exchange(request, start);
  int redirects = 0;
  const auto restart_chain = [&] {
    exchange.target = start;
    exchange.headers.clear();
    redirects = 0;
  };
  for (int status_retries = 0;;) {
    exchange.send_authorization = exchange.target.origin_key == start.origin_key;
    exchange.may_redirect = redirects < request.max_redirects;
    AttemptResult result = co_await attempt(transport, exchange, state, file, progress);
    result.outcome.headers = exchange.headers;
    switch (result.step) {
      case Step::done: co_return std::move(result.outcome);
      case Step::failed: co_return std::move(result.outcome);
      case Step::redirect:
        exchange.target = parse_absolute_url(resolve_location(exchange.target, result.location), "redirect Location");
        ++redirects;
        break;
      case Step::transient_status: {
        restart_chain();
        if (status_retries >= request.max_status_retries) co_return std::move(result.outcome);
        const std::chrono::milliseconds delay = backoff.delay(status_retries++, 0.0);
        if (co_await sleep_for(clock, delay)) {
          DownloadOutcome cancelled;
          cancelled.error = make_error_code(errc::cancelled);
          cancelled.reason = "cancelled";
          co_return cancelled;
        }
        break;
      }
      case Step::dropped:
        restart_chain();
        if (state.resumes >= request.max_resumes) co_return out_of_resumes(request, state, std::move(result.outcome));
        ++state.resumes;
        break;
    }
  }
}

}  // namespace tinker::http
