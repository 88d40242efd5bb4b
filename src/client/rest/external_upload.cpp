// RestClient's external-weights upload (doc/rest.md#external-weights): start, an HTTP PUT of each
// file to its signed URL (streamed from disk, with the headers the server gave and never the
// Tinker credentials), then finish. The directory form checks every file first and calls finish
// only when every PUT succeeded, so a failed upload registers nothing.
#include <tinker/rest_client.hpp>

#include "api/endpoints_external.hpp"
#include "client/rest/operation.hpp"
#include "http/retry_policy.hpp"
#include "http/single_request.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace tinker::client::rest {
namespace {

namespace fs = std::filesystem;
using boost::system::error_code;

Op<ExternalWeightsUploadStartResponse> upload_start_op(HolderPtr holder, ExternalWeightsUploadStartRequest request,
                                                       diagnostics& diag) {
  using Result = OperationResult<ExternalWeightsUploadStartResponse>;
  if (request.base_model.empty()) {
    throw error(errc::invalid_argument, "external_weights_upload_start: base_model must not be empty");
  }
  if (request.lora_config.rank < 1) {
    throw error(errc::invalid_argument, "external_weights_upload_start: lora_config.rank must be at least 1, got " +
                                            std::to_string(request.lora_config.rank));
  }
  ExternalWeightsUploadStartResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return Result(ec, out);
  const error_code ec =
      co_await api::external_weights_upload_start(holder->http(), request, out, diag, holder->retry_call());
  co_return Result(ec, std::move(out));
}

Op<ExternalWeightsUploadFinishResponse> upload_finish_op(HolderPtr holder, std::string upload_id, diagnostics& diag) {
  using Result = OperationResult<ExternalWeightsUploadFinishResponse>;
  if (upload_id.empty()) {
    throw error(errc::invalid_argument, "external_weights_upload_finish: upload_id must not be empty");
  }
  ExternalWeightsUploadFinishResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return Result(ec, out);
  const ExternalWeightsUploadFinishRequest request(std::move(upload_id));
  const error_code ec =
      co_await api::external_weights_upload_finish(holder->http(), request, out, diag, holder->retry_call());
  co_return Result(ec, std::move(out));
}

bool same_header_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

// The server's headers, minus the ones the HTTP layer writes itself; a value that could split
// the request (CR, LF, NUL) is refused.
std::vector<std::pair<std::string, std::string>> put_headers(const ExternalWeightsUploadUrl& target,
                                                             const std::string& file) {
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [name, value] : target.headers) {
    const bool bad = name.empty() || name.find_first_of(":\r\n") != std::string::npos ||
                     value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos;
    if (bad) throw error(errc::protocol_error, file + ": the server gave an invalid upload header '" + name + "'");
    const bool ours = same_header_name(name, "Host") || same_header_name(name, "Content-Length") ||
                      same_header_name(name, "Connection") || same_header_name(name, "Transfer-Encoding");
    if (!ours) headers.emplace_back(name, value);
  }
  return headers;
}

// The host of a URL, for messages (never the query: it is signed).
std::string url_host(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const std::size_t end = url.find_first_of("/?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool transient_put_status(int status) {
  return status == 408 || status == 429 || status >= 500;
}

// One file's PUT with its retries; the error names the file and the URL's host.
boost::asio::awaitable<error_code> put_file(ClientHolder& holder, const ExternalWeightsUploadUrl& target,
                                            const fs::path& file, const std::string& label,
                                            std::optional<int> max_retries, diagnostics& diag) {
  std::error_code size_error;
  const std::uint64_t size = fs::file_size(file, size_error);
  if (size_error || !fs::is_regular_file(file)) {
    throw error(errc::invalid_argument, label + ": cannot read " + file.string());
  }
  const ClientOptions& options = holder.http().options();
  const int retries = max_retries.value_or(options.retry.max_retries);
  if (retries < 0) throw error(errc::invalid_argument, "max_retries: must not be negative");
  http::DownloadTransport transport(options);
  http::SingleRequest request("PUT", target.url);
  request.headers = put_headers(target, label);
  request.file_body = http::FileSlice(file, 0, size);
  for (int attempt = 0;; ++attempt) {
    const http::SingleResponse response = co_await http::send_single(transport, request);
    if (response.error == errc::cancelled) co_return response.error;
    const bool ok = !response.error && response.status >= 200 && response.status < 300;
    if (ok) co_return error_code();
    const bool transient = response.error || transient_put_status(response.status);
    if (!transient || attempt >= retries) {
      diag.clear();
      diag.http_status = response.status;
      if (auto id = response.header("x-request-id")) diag.request_id = *id;
      diag.message = "the upload of " + label + " to " + url_host(target.url) + " failed after " +
                     std::to_string(attempt + 1) +
                     " attempt(s): " + (response.error ? response.reason : "HTTP " + std::to_string(response.status));
      co_return response.error ? response.error : make_error_code(errc::request_failed);
    }
    holder.log(LogLevel::info, "the upload of " + label + " to " + url_host(target.url) + " failed (" +
                                   (response.error ? response.reason : "HTTP " + std::to_string(response.status)) +
                                   "); retrying");
    if (co_await http::sleep_for(holder.http().clock(), http::backoff_delay(attempt, 0.5, options.retry))) {
      co_return make_error_code(errc::cancelled);
    }
  }
}

Op<Done> upload_put_op(HolderPtr holder, ExternalWeightsUploadUrl target, fs::path file,
                       ExternalWeightsPutOptions options, diagnostics& diag) {
  if (target.url.empty()) throw error(errc::invalid_argument, "external_weights_upload_put: url must not be empty");
  const std::string label = file.filename().string();
  const error_code ec = co_await put_file(*holder, target, file, label, options.max_retries, diag);
  co_return OperationResult<Done>(ec, Done());
}

// The local file for a name the server asked for; a name that would leave `dir` is refused.
fs::path local_upload_file(const fs::path& dir, const std::string& name) {
  const fs::path relative(name);
  bool escapes = name.empty() || relative.is_absolute() || relative.has_root_name();
  for (const fs::path& part : relative) escapes = escapes || part == ".." || part == ".";
  if (escapes) {
    throw error(errc::protocol_error, "the server asked for the file '" + name + "', which is not inside " +
                                          dir.string() + "; nothing was uploaded");
  }
  return dir / relative;
}

Op<ExternalWeightsUploadFinishResponse> upload_directory_op(HolderPtr holder, fs::path dir,
                                                            ExternalWeightsUploadStartRequest request,
                                                            ExternalWeightsUploadOptions options, diagnostics& diag) {
  using Result = OperationResult<ExternalWeightsUploadFinishResponse>;
  std::error_code dir_error;
  if (!fs::is_directory(dir, dir_error)) {
    throw error(errc::invalid_argument, "upload_external_weights: no such directory: " + dir.string());
  }
  if (options.destination_project_id) request.destination_project_id = options.destination_project_id;
  auto [start_ec, started] = co_await upload_start_op(holder, std::move(request), diag);
  if (start_ec) co_return Result(start_ec, ExternalWeightsUploadFinishResponse());
  // Every file first: a missing one fails before any byte is sent.
  std::vector<std::pair<std::string, fs::path>> files;
  for (const auto& [name, target] : started.urls) {
    fs::path local = local_upload_file(dir, name);
    if (!fs::is_regular_file(local, dir_error)) {
      throw error(errc::invalid_argument, "upload_external_weights: the server asked for " + name +
                                              ", which is not a file in " + dir.string() + "; nothing was uploaded");
    }
    files.emplace_back(name, std::move(local));
  }
  if (files.empty()) {
    diag.clear();
    diag.message = "external_weights_upload_start answered no file to upload";
    co_return Result(make_error_code(errc::protocol_error), ExternalWeightsUploadFinishResponse());
  }
  for (const auto& [name, local] : files) {
    if (options.on_file) options.on_file(name);
    const error_code ec = co_await put_file(*holder, started.urls.at(name), local, name, options.max_put_retries, diag);
    if (ec) {
      diag.message += " (upload " + started.upload_id + " was not finished: nothing was registered)";
      co_return Result(ec, ExternalWeightsUploadFinishResponse());
    }
  }
  co_return co_await upload_finish_op(std::move(holder), started.upload_id, diag);
}

}  // namespace

}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operations above

void rest_external_weights_upload_start(HolderPtr h, ExternalWeightsUploadStartRequest r, diagnostics* d,
                                        Handler<ExternalWeightsUploadStartResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &upload_start_op, std::move(r));
}

void rest_external_weights_upload_put(HolderPtr h, ExternalWeightsUploadUrl target, std::filesystem::path file,
                                      ExternalWeightsPutOptions o, diagnostics* d, Handler<Done> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &upload_put_op, std::move(target), std::move(file), std::move(o));
}

void rest_external_weights_upload_finish(HolderPtr h, std::string upload_id, diagnostics* d,
                                         Handler<ExternalWeightsUploadFinishResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &upload_finish_op, std::move(upload_id));
}

void rest_upload_external_weights(HolderPtr h, std::filesystem::path dir, ExternalWeightsUploadStartRequest r,
                                  ExternalWeightsUploadOptions o, diagnostics* d,
                                  Handler<ExternalWeightsUploadFinishResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &upload_directory_op, std::move(dir), std::move(r), std::move(o));
}

}  // namespace tinker::detail
