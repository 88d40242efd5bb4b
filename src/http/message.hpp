// Transport-neutral HTTP request and response of the SDK (no Beast here: only src/http/*.cpp
// sees Beast and OpenSSL).
#pragma once

#include "core/wire/borrowed_runs.hpp"

#include <boost/container/small_vector.hpp>

#include <array>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::http {

enum class Method { get, post, put, delete_ };
const char* to_string(Method method) noexcept;

/// Which connection pool serves a request (one pool per origin and purpose,
/// doc/architecture.md#connection-pools).
enum class PoolKind { session, training, sampling, futures, storage };
const char* to_string(PoolKind kind) noexcept;

class Header {
 public:
  Header() = default;
  Header(std::string name_, std::string value_) : name(std::move(name_)), value(std::move(value_)) {}
  std::string name;
  std::string value;
  friend bool operator==(const Header&, const Header&) = default;
};

/// True for a header name that cannot inject lines: not empty, no ':', CR or LF.
constexpr bool is_safe_header_name(std::string_view name) noexcept {
  return !name.empty() && name.find_first_of(":\r\n") == std::string_view::npos;
}

/// The name of an extra request header: a constant of the SDK, checked when the SDK is compiled
/// (is_safe_header_name), so that no request checks it again. A name that fails the check does
/// not compile.
class HeaderName {
 public:
  consteval HeaderName(const char* name) : text(name) {  // NOLINT(google-explicit-constructor)
    if (!is_safe_header_name(text)) throw "a header name must not be empty nor hold ':', CR or LF";
  }
  std::string_view text;
};

/// An extra request header. Its name is a constant of the SDK (static storage: the poll and
/// backpressure headers), so building a request allocates nothing for it; its value is checked
/// before the request is sent (check_call_headers).
class RequestHeader {
 public:
  RequestHeader() = default;
  RequestHeader(HeaderName name_, std::string value_) : name(name_.text), value(std::move(value_)) {}
  std::string_view name;
  std::string value;
  friend bool operator==(const RequestHeader&, const RequestHeader&) = default;
};

/// The idempotency key of a call, kept in place: the SDK's keys ("tinker-cpp-retry-" and a UUID,
/// 53 characters) would make a string allocate for every call.
class IdempotencyKey {
 public:
  static constexpr std::size_t capacity = 55;

  bool empty() const noexcept { return size_ == 0; }
  std::string_view view() const noexcept { return {text_.data(), size_}; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT(google-explicit-constructor)
  /// Makes the key `size` characters long (at most `capacity`) and returns where to write them.
  char* overwrite(std::size_t size) noexcept {
    size_ = static_cast<std::uint8_t>(size <= capacity ? size : capacity);
    return text_.data();
  }

 private:
  std::array<char, capacity> text_{};
  std::uint8_t size_ = 0;
};

/// A request's path: a view of a constant with static storage (the SDK's fixed endpoint paths,
/// such as the poll's, sent for every sample) or a string of its own (paths with ids in them).
/// A constant costs no allocation.
class RequestPath {
 public:
  RequestPath() = default;
  RequestPath(std::string path) : owned_(std::move(path)) {}     // NOLINT(google-explicit-constructor)
  RequestPath(const char* path) : owned_(path) {}                // NOLINT(google-explicit-constructor)
  static RequestPath constant(std::string_view path) noexcept {  ///< `path` must have static storage
    RequestPath constant_path;
    constant_path.constant_ = path;
    return constant_path;
  }

  std::string_view view() const noexcept { return constant_.data() != nullptr ? constant_ : std::string_view(owned_); }
  operator std::string_view() const noexcept { return view(); }  // NOLINT(google-explicit-constructor)
  std::string str() const { return std::string(view()); }
  bool empty() const noexcept { return view().empty(); }

 private:
  std::string owned_;
  std::string_view constant_;
};

/// One logical call. Transport retries (doc/protocol.md#transport-retries) resend it unchanged
/// except for `x-stainless-retry-count`; the idempotency key stays the same for every attempt.
class Request {
 public:
  Request() = default;
  Request(Method method_, RequestPath path_, PoolKind pool_ = PoolKind::training)
      : method(method_), path(std::move(path_)), pool(pool_) {}

  Method method = Method::get;
  /// Path and query relative to the base URL ("/api/v1/healthz"), or an absolute http(s) URL
  /// for storage downloads (which are sent without credentials).
  RequestPath path;
  PoolKind pool = PoolKind::training;
  /// The body, or with `borrowed` its spine (wire/borrowed_runs.hpp).
  std::string body;
  /// Runs of the body sent from the caller's memory instead of being copied into `body` (the
  /// arrays of a training batch): the list and what it points to must stay valid until the call
  /// has completed. Sent as they are on plain TCP; a TLS stream or a zstd frame gets the body
  /// flattened, once per call. A view, not a vector: every request carries this member, and the
  /// sampling path keeps several requests in coroutine frames.
  std::span<const wire::BorrowedRun> borrowed;
  /// Media types are constants with static storage ("application/json", ...): a view, not a
  /// string, so that a request does not allocate for them.
  std::string_view content_type;  ///< empty: no Content-Type header (GET)
  std::string_view accept = "application/json";
  /// Extra headers (poll headers, backpressure, ...): at most three per request on the hot
  /// paths, kept in place so that building a request does not allocate for them.
  boost::container::small_vector<RequestHeader, 3> headers;
  /// Transport retries for this call; empty = ClientOptions::retry.max_retries. Some endpoints use 0
  /// (the transport-retries column of doc/protocol.md#endpoints).
  std::optional<int> max_retries;
  /// Read timeout of each attempt; empty = ClientOptions::timeouts.request.
  std::optional<std::chrono::milliseconds> timeout;
  bool compress_zstd = false;  ///< send the body as one zstd frame (Content-Encoding: zstd)
  /// Redirects are never followed; a 3xx completes as success only when this is set (the
  /// checkpoint-archive endpoint must see the raw 302, doc/rest.md#checkpoint-downloads), else as
  /// an HTTP error.
  bool accept_redirect = false;
  /// Shared by every attempt of the logical call, the transport and call retries; generated when empty
  /// (non-GET requests only).
  IdempotencyKey idempotency_key;
};

/// One field of a ResponseHeaders: views into its buffer, valid until the list changes.
class HeaderView {
 public:
  std::string_view name;
  std::string_view value;
};

/// The header fields of a response, names lower-cased, kept back to back in one buffer (each
/// field as its two sizes, then its name and value): a response costs one allocation for all of
/// its fields instead of one or two per field, and moving it moves one string (every sample result
/// and poll answer is parsed into one of these).
class ResponseHeaders {
 public:
  ResponseHeaders() = default;
  ResponseHeaders(std::initializer_list<Header> fields);
  ResponseHeaders(const std::vector<Header>& fields);  // NOLINT(google-explicit-constructor): tests build them so
  ResponseHeaders(const ResponseHeaders& other);
  ResponseHeaders& operator=(const ResponseHeaders& other);
  ResponseHeaders(ResponseHeaders&& other) noexcept;
  ResponseHeaders& operator=(ResponseHeaders&& other) noexcept;
  ~ResponseHeaders() = default;

  /// Appends a field; the name is stored lower-cased.
  void emplace_back(std::string_view name, std::string_view value);
  /// Replaces the value of every field named `name` (case-insensitive), or appends one.
  void set(std::string_view name, std::string_view value);
  /// The value of the first field `name` (case-insensitive), or empty.
  std::string_view find(std::string_view name) const noexcept;
  /// Reserves room for `bytes` of names and values (one allocation for a whole response).
  void reserve(std::size_t bytes) {
    if (bytes > capacity_) grow(bytes);
  }
  void clear() noexcept {
    size_ = 0;
    count_ = 0;
  }
  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }

  /// Walks the fields in the order they arrived.
  class const_iterator {
   public:
    using value_type = HeaderView;
    using difference_type = std::ptrdiff_t;
    const_iterator() = default;
    explicit const_iterator(const char* at) noexcept : at_(at) {}
    HeaderView operator*() const noexcept;
    const_iterator& operator++() noexcept;
    const_iterator operator++(int) noexcept {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const const_iterator&, const const_iterator&) = default;

   private:
    const char* at_ = nullptr;
  };
  const_iterator begin() const noexcept { return const_iterator(text_.get()); }
  const_iterator end() const noexcept { return const_iterator(size_ == 0 ? text_.get() : text_.get() + size_); }

 private:
  void grow(std::size_t capacity);

  // The fields back to back. Not a std::string: its resize() fills the new room before it is
  // written (every field of every response goes through emplace_back).
  std::unique_ptr<char[]> text_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t count_ = 0;
};

class Response {
 public:
  Response() = default;

  int status = 0;
  ResponseHeaders headers;  ///< names lower-cased
  std::string body;

  /// The value of the first header `name` (case-insensitive), or empty.
  std::string_view header(std::string_view name) const noexcept { return headers.find(name); }
  std::string_view content_type() const noexcept { return header("content-type"); }
  bool is_json() const noexcept;      ///< media type ends with "json" (as the Python SDK decides)
  bool is_protobuf() const noexcept;  ///< media type contains application/x-protobuf
};

}  // namespace tinker::http
