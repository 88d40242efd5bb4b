// One HTTP request to an absolute URL of any origin on a fresh connection, the answer read into
// memory: for the few calls outside the Tinker API that send a body (the Hugging Face Hub's JSON
// and NDJSON endpoints, LFS uploads of a file or a slice of one). Proxies, TLS verification and
// SNI as every SDK request (http::connect); no retries: the caller decides what an answer means.
//
// Beast-free interface; single_request.cpp is the Beast side.
#pragma once

#include "http/download.hpp"

#include <tinker/config.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::http {

/// A request body read from a file: `length` bytes from `offset`, streamed in 64 KiB chunks.
class FileSlice {
 public:
  FileSlice() = default;
  FileSlice(std::filesystem::path path_, std::uint64_t offset_, std::uint64_t length_)
      : path(std::move(path_)), offset(offset_), length(length_) {}

  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

class SingleRequest {
 public:
  SingleRequest() = default;
  SingleRequest(std::string method_, std::string url_) : method(std::move(method_)), url(std::move(url_)) {}

  std::string method;  ///< "GET", "POST", "PUT", ...
  std::string url;     ///< absolute http:// or https:// URL
  /// Extra header lines (Content-Type, Accept, ...); Host, User-Agent, Content-Length and
  /// Connection are the module's.
  std::vector<std::pair<std::string, std::string>> headers;
  /// The whole Authorization value ("Bearer ..."); empty: none. Never in a message.
  Secret authorization;
  std::string body;  ///< sent when `file_body` is empty
  std::optional<FileSlice> file_body;
  std::size_t max_response = 1u << 20;  ///< larger answers fail with errc::response_too_large
};

class SingleResponse {
 public:
  SingleResponse() = default;

  boost::system::error_code error;  ///< a transport failure (the answer's status is not judged)
  std::string reason;               ///< readable, names the URL's host
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower-cased

  /// The first value of header `name` (lower case), or nullopt.
  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
};

/// Sends `request` once and reads the whole answer. Cancellation (the coroutine's slot) aborts
/// with errc::cancelled in `error`.
boost::asio::awaitable<SingleResponse> send_single(DownloadTransport& transport, SingleRequest request);

}  // namespace tinker::http
