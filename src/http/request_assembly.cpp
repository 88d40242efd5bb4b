#include "http/request_assembly.hpp"

#include <tinker/error.hpp>

#include <algorithm>

namespace tinker::http {

std::string join_path(std::string_view base_path, std::string_view request_path) {
  std::string path(base_path);
  if (path.empty() || path.back() != '/') path += '/';
  if (!request_path.empty() && request_path.front() == '/') request_path.remove_prefix(1);
  path += request_path;
  return path;
}

bool is_absolute_url(std::string_view path) noexcept {
  return path.starts_with("http://") || path.starts_with("https://");
}

char* write_seconds_text(char* out, std::chrono::milliseconds duration) noexcept {
  const auto ms = std::max<std::chrono::milliseconds::rep>(duration.count(), 0);
  out = std::to_chars(out, out + seconds_text_max, ms / 1000).ptr;
  if (ms % 1000 == 0) return out;
  const auto fraction = ms % 1000;
  *out++ = '.';
  *out++ = static_cast<char>('0' + fraction / 100);
  *out++ = static_cast<char>('0' + fraction / 10 % 10);
  *out++ = static_cast<char>('0' + fraction % 10);
  return out;
}

std::string seconds_text(std::chrono::milliseconds duration) {
  std::array<char, seconds_text_max> text;
  return std::string(text.data(), write_seconds_text(text.data(), duration));
}

std::string origin_header_lines(const Endpoint& endpoint, const std::vector<Header>& standard_headers,
                                std::string_view credential) {
  std::vector<Header> headers;
  headers.emplace_back("Host", endpoint.host_header());
  headers.insert(headers.end(), standard_headers.begin(), standard_headers.end());
  if (!credential.empty()) headers.emplace_back("X-API-Key", std::string(credential));
  std::string lines;
  for (const Header& header : headers) {
    if (!is_safe_header(header.name, header.value)) {
      throw error(errc::invalid_configuration,
                  "header '" + header.name + "' contains a line break (check default_headers and the credentials)");
    }
    append_header_line(lines, header.name, header.value);
  }
  return lines;
}

// Only the values: the names are the SDK's constants, checked when compiled (HeaderName).
void check_call_headers(const CallHeaders& call) {
  const Request& request = *call.request;
  const auto check = [](std::string_view name, std::string_view value) {
    if (!is_safe_header_value(value)) {
      throw error(errc::invalid_argument, "request header '" + std::string(name) + "' contains a line break");
    }
  };
  if (request.method != Method::get) check("X-Idempotency-Key", call.idempotency_key);
  for (const RequestHeader& header : request.headers) check(header.name, header.value);
}

std::size_t call_header_lines_size(const CallHeaders& call) noexcept {
  if (call.request == nullptr) return 0;
  const Request& request = *call.request;
  // The fixed names and values take well under 256 bytes (the timeout at most seconds_text_max).
  std::size_t size = 256 + request.accept.size() + request.content_type.size() + call.idempotency_key.size();
  for (const RequestHeader& header : request.headers) size += header.name.size() + header.value.size() + 4;
  return size;
}

// Runs for every attempt of every call: written through a pointer into room reserved beforehand
// (appending to a string checks its capacity at every piece).
char* write_call_header_lines(char* out, const CallHeaders& call) noexcept {
  if (call.request == nullptr) return out;
  const Request& request = *call.request;
  // Media types are constants of the SDK (message.hpp), like the names and values formatted
  // here: they need no check.
  out = write_header_line(out, "Accept", request.accept);
  if (!request.content_type.empty()) out = write_header_line(out, "Content-Type", request.content_type);
  if (request.compress_zstd) out = copy_text(out, "Content-Encoding: zstd\r\n");
  if (request.method != Method::get) out = write_header_line(out, "X-Idempotency-Key", call.idempotency_key);
  out = copy_text(out, "x-stainless-read-timeout: ");
  out = write_seconds_text(out, call.read_timeout);
  out = copy_text(out, "\r\n");
  for (const RequestHeader& header : request.headers) out = write_header_line(out, header.name, header.value);
  return out;
}

void append_call_header_lines(std::string& out, const CallHeaders& call) {
  const std::size_t at = out.size();
  out.resize(at + call_header_lines_size(call));
  out.resize(static_cast<std::size_t>(write_call_header_lines(out.data() + at, call) - out.data()));
}

std::string call_header_lines(const Request& request, std::string_view idempotency_key,
                              std::chrono::milliseconds timeout) {
  CallHeaders call;
  call.request = &request;
  call.idempotency_key = idempotency_key;
  call.read_timeout = timeout;
  check_call_headers(call);
  std::string lines;
  lines.reserve(call_header_lines_size(call));
  append_call_header_lines(lines, call);
  return lines;
}

}  // namespace tinker::http
