// The state of tinker-local's HTTP front end and the per-request exchange the handlers fill.
// Everything here lives on the server's single io thread: no locks.
//
// Wire choices of the front end (documented for clients and test writers):
//  * Every answer carries Content-Length (except 204) and `x-request-id` (the header the client
//    reads into its diagnostics, doc/protocol.md#headers), and JSON bodies Content-Type
//    application/json.
//  * Errors are {"detail": "<message>"}: unknown path 404 "Not Found", wrong method 405 (with
//    Allow), missing/invalid key 401 "Invalid API key", undecodable JSON or protobuf bodies,
//    missing fields and wrong types 422 (the message names the field path), bad query
//    parameters 422, a body over max_request_body (declared, chunked or after zstd
//    decompression) 413, a corrupt zstd body 400, another Content-Encoding 415,
//    protobuf bodies on JSON-only endpoints 415.
//  * retrieve_future answers the engine's outcome (JSON or protobuf); with try_again_as_408 a
//    pending future is HTTP 408 with the try_again body (queue_state included).
//  * REST calls with empty successes (checkpoint delete/publish/unpublish/ttl, session project)
//    answer 204 No Content (clients accept an empty 200 or 204 there).
//  * healthz needs no key (see router.cpp); /_downloads/ needs none (signed URLs carry no key);
//    /_admin/ needs none but answers 403 to non-loopback peers.
#pragma once

#include "programs/local/engine/engine.hpp"
#include "programs/local/server/auth.hpp"
#include "programs/local/server/faults.hpp"
#include "programs/local/server/header_values.hpp"
#include "programs/local/server/hub_store.hpp"
#include "programs/local/server/log.hpp"
#include "programs/local/server/router.hpp"
#include "programs/local/tokenizer/hub_repos.hpp"

#include <tinker/codec.hpp>
#include <tinker/local/server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::front {

inline constexpr std::string_view kJson = "application/json";
inline constexpr std::string_view kProtobuf = "application/x-protobuf";

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

/// What the front end answers. Reused across the requests of a connection (its buffers keep
/// their capacity), so a steady stream of small requests allocates little.
class Reply {
 public:
  int status = 200;
  std::string content_type;  ///< empty: no Content-Type header
  std::string body;
  std::vector<Header> headers;
  /// Downloads: the body is [shared_offset, shared_offset + shared_length) of `shared_body`.
  std::shared_ptr<const std::string> shared_body;
  std::size_t shared_offset = 0;
  std::size_t shared_length = 0;

  void reset();
  /// {"detail": detail} with `status_code`.
  void error(int status_code, std::string_view detail);
  /// A typed JSON body through the SDK's codec.
  template <class T>
  void json(const T& value, int status_code = 200) {
    status = status_code;
    content_type.assign(kJson);
    body.clear();
    append_json(value, body);
  }
  /// Raw JSON text (admin answers).
  void json_text(std::string text, int status_code = 200);
  std::string_view body_view() const noexcept;
};

/// The arrival log: one record per request, newest `limit` kept.
class RequestLog {
 public:
  explicit RequestLog(std::size_t limit) : limit_(limit) {}

  /// Appends a record and returns its index (arrival order, from 0).
  std::int64_t append(RequestRecord record);
  /// The record of `index`, or null when it was dropped for the limit.
  RequestRecord* find(std::int64_t index);
  std::vector<RequestRecord> snapshot() const;

 private:
  std::size_t limit_;
  std::int64_t first_index_ = 0;
  std::deque<RequestRecord> records_;
};

/// One request being served: the parsed request, its route and what the handlers learnt.
class Exchange {
 public:
  Exchange(HttpRequest& request_, Reply& reply_) : request(request_), reply(reply_) {}

  HttpRequest& request;
  Reply& reply;
  Route route;
  std::string_view path;   ///< target without query and path prefix
  std::string_view query;  ///< after '?'
  Principal principal;     ///< set for authenticated endpoints
  bool from_loopback = true;

  // Learnt while handling, for the arrival log.
  std::optional<std::int64_t> seq_id;
  std::optional<std::string> model_id;
  std::optional<std::string> request_id;
  std::string fault;

  /// The request body after Content-Encoding (set by decode_body()).
  std::string_view body;
  std::string decompressed;

  std::string_view header(std::string_view name) const;
};

class Frontend {
 public:
  Frontend(boost::asio::io_context& io, const ServerOptions& options, const LocalTokenizers& tokenizers);
  ~Frontend();
  Frontend(const Frontend&) = delete;
  Frontend& operator=(const Frontend&) = delete;

  const ServerOptions& options;
  Logger logger;
  Engine engine;
  Authenticator authenticator;
  FaultPlan faults;
  RequestLog requests;
  std::string base_url;  ///< set once the port is known
  HubRepos hub_repos;    ///< served by handle_hub; set before the server listens
  HubStore hub_store;    ///< repos pushed through the Hub upload API (handle_hub_api), served by handle_hub too
  /// While a future endpoint submits to the engine: where the queue-pause hook notes that a
  /// pause_queue fault fired (the exchange's fault name, for the arrival log).
  std::string* pause_note = nullptr;

  /// A fresh id for the `x-request-id` header.
  const std::string& next_request_id();
  AuditReport audit() const;

 private:
  std::string request_id_prefix_;
  std::string request_id_;
  std::uint64_t request_counter_ = 0;
};

// Handlers (handlers_*.cpp, admin.cpp, downloads.cpp). They fill ex.reply; engine errors
// become HTTP answers inside them.

/// Every /api/v1/ endpoint except retrieve_future, synchronously.
void handle_api(Frontend& fe, Exchange& ex);
/// POST /api/v1/retrieve_future: the engine's long poll.
boost::asio::awaitable<void> handle_retrieve_future(Frontend& fe, Exchange& ex);
/// POST /api/v1/retrieve_futures: the engine's long poll of a sampling session's completions.
boost::asio::awaitable<void> handle_retrieve_futures(Frontend& fe, Exchange& ex);
void handle_rest(Frontend& fe, Exchange& ex);
void handle_admin(Frontend& fe, Exchange& ex);
void handle_download(Frontend& fe, Exchange& ex);
/// Answers with `body` whole (200), the one byte range `range_header` asks for (206 with
/// Content-Range) or 416 when it lies past the end (downloads.cpp; shared with the Hub's files).
void reply_with_range(Reply& reply, std::string_view range_header, std::shared_ptr<const std::string> body,
                      std::string content_type);
/// GET/HEAD of a Hugging Face Hub file (hub.cpp).
void handle_hub(Frontend& fe, Exchange& ex);
/// The Hub's upload API: whoami, repos, branches, preupload, commits, LFS batch (hub_upload.cpp).
void handle_hub_api(Frontend& fe, Exchange& ex);
/// The Hub account of the request's "Authorization: Bearer <API key>", or "" when there is none
/// or the key is not accepted (hub_upload.cpp).
std::string hub_account(Frontend& fe, const Exchange& ex);
/// PUT/POST of /_hub_lfs/{token}: LFS object bytes and multipart completion (hub_upload.cpp).
void handle_hub_lfs(Frontend& fe, Exchange& ex);
/// PUT /_uploads/{upload_id}/{file}: one file of an external-weights upload (external_uploads.cpp).
void handle_external_upload(Frontend& fe, Exchange& ex);
/// The external-weights endpoints of /api/v1/ (external_uploads.cpp): the files' URLs of an
/// external checkpoint, and the upload's start and finish.
void handle_external_weights_api(Frontend& fe, Exchange& ex);

/// Applies Content-Encoding and sets ex.body; false (with the reply set) on failure.
bool decode_body(Frontend& fe, Exchange& ex);

/// Decodes ex.body as JSON into `out`; on failure answers 422 naming the field and returns false.
template <class T>
bool decode_json(Exchange& ex, T& out) {
  diagnostics diag;
  if (const auto ec = from_json(ex.body, out, diag)) {
    ex.reply.error(422, diag.message.empty() ? ec.message() : diag.message);
    return false;
  }
  return true;
}

/// Runs `call`, turning the engine's HttpError into its status and any other exception into a
/// logged 500.
template <class Call>
void guarded(Frontend& fe, Exchange& ex, Call&& call) {
  try {
    call();
  } catch (const HttpError& e) {
    ex.reply.error(e.status(), e.what());
  } catch (const std::exception& e) {
    fe.logger.error(std::string("internal error in ") + endpoint_name(ex.route.endpoint) + ": " + e.what());
    ex.reply.error(500, "internal server error");
  }
}

}  // namespace tinker::local::front
