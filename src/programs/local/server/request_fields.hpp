// The request fields tinker-local keeps. Beast's parser stores every field in a case-insensitive
// tree, one allocation each; the Python SDK sends about fifteen per request, most of them
// informational (X-Stainless-*, User-Agent), and storing them was the largest single cost of
// serving a null-model sample (callgrind: about half of the server's instructions per asample).
// The server keeps only what it reads; Exchange::header checks in debug builds that a name it is
// asked for is one of them, so a handler reading a new header cannot silently get "".
#pragma once

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <optional>
#include <string_view>

namespace tinker::local::front {

/// The request fields the server stores; every other field is dropped while parsing.
enum class KeptField {
  accept,
  authorization,
  connection,
  content_encoding,
  content_type,
  expect,
  range,
  api_key,                  ///< X-API-Key
  cf_access_client_secret,  ///< CF-Access-Client-Secret
  idempotency_key,          ///< X-Idempotency-Key
  retry_count,              ///< x-stainless-retry-count
  request_iteration,        ///< X-Tinker-Request-Iteration
  sampling_backpressure,    ///< X-Tinker-Sampling-Backpressure
  upload_token,             ///< X-Tinker-Upload-Token (external-weights upload PUTs)
};

/// Which kept field request field `name` is (`known`: Beast's enum for it, or unknown); nullopt
/// for a field the server does not store.
std::optional<KeptField> kept_request_field(boost::beast::http::field known, std::string_view name) noexcept;
bool is_kept_request_field(std::string_view name) noexcept;

/// A request parser that stores only the kept fields. Framing (Content-Length, chunked,
/// Connection, Upgrade) is decided by the parser itself as each field arrives, stored or not.
class RequestParser final : public boost::beast::http::request_parser<boost::beast::http::string_body> {
 private:
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::system::error_code&) override {
    if (kept_request_field(name, name_string)) get().insert(name, name_string, value);
  }
};

}  // namespace tinker::local::front
