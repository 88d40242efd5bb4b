// Typed decoding of HTTP responses with the content-type rules of doc/protocol.md#transport.
#pragma once

#include "core/types/exception_error.hpp"
#include "core/wire/future_ticket.hpp"
#include "http/message.hpp"

#include <tinker/codec.hpp>

#include <string>

namespace tinker::api {

/// Decodes a JSON body as T. Like the Python SDK, a body whose media type is not JSON is still
/// tried as JSON; if that fails the error is a protocol_error naming the content type (an HTML
/// error page from a proxy, say) rather than a confusing decode error.
template <class T>
boost::system::error_code decode_json_response(const http::Response& response, T& out, diagnostics& diag) {
  diagnostics decode_diag;
  const auto ec = from_json(response.body, out, decode_diag);
  if (!ec) return ec;
  diag = decode_diag;
  diag.http_status = response.status;
  diag.request_id = std::string(response.header("x-request-id"));
  if (response.is_json() || response.content_type().empty()) return ec;
  diag.message = "expected a JSON response, got content type '" + std::string(response.content_type()) + "'";
  return make_error_code(errc::protocol_error);
}

/// The answer of every submit: read directly when it is the usual plain ticket, else as above.
inline boost::system::error_code decode_json_response(const http::Response& response, UntypedAPIFuture& out,
                                                      diagnostics& diag) {
  if (wire::read_plain_future_ticket(response.body, out)) return {};
  return decode_json_response<UntypedAPIFuture>(response, out, diag);
}

/// Decodes a protobuf result (SampleResponse, ForwardBackwardOutput). doc/protocol.md#protobuf: the content type
/// must say application/x-protobuf; a JSON success is refused as the 0.25 SDK does.
template <class T>
boost::system::error_code decode_protobuf_response(const http::Response& response, T& out, diagnostics& diag) {
  if (!response.is_protobuf()) {
    diag.clear();
    diag.http_status = response.status;
    diag.message =
        "expected an application/x-protobuf result, got content type '" + std::string(response.content_type()) + "'";
    return make_error_code(errc::protocol_error);
  }
  try {
    out = from_protobuf<T>(response.body);
    return {};
  } catch (const error&) {
    const boost::system::error_code ec = detail::current_exception_error(diag);
    diag.http_status = response.status;
    return ec;
  }
}

}  // namespace tinker::api
