// A raw Boost.Beast client of the Tinker protocol for benchmarks: one keep-alive connection per
// object, hand-written JSON bodies, no SDK code. It is the baseline the SDK is compared with
// (the same HTTP exchanges on the same server in the same run: `tinker-bench sample --compare-raw`
// and benchmarks/sampling_client.cpp) and the load generator of the tinker-local benchmark.
#pragma once

#include "programs/bench/tokens.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <sys/resource.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

constexpr const char* kApiKey = "tml-bench-key";

inline double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// One keep-alive connection with a reusable buffer; `exchange` sends one request and reads the
// answer, returning its body (throws on transport errors or a non-200 status).
class Connection {
 public:
  Connection(asio::io_context& context, const tcp::endpoint& endpoint) : stream_(context) {
    stream_.connect(endpoint);
    stream_.socket().set_option(tcp::no_delay(true));
  }

  asio::awaitable<std::string> exchange(bhttp::verb method, std::string target, std::string body) {
    bhttp::request<bhttp::string_body> request(method, target, 11);
    request.set(bhttp::field::host, "127.0.0.1");
    request.set("X-API-Key", kApiKey);
    if (method == bhttp::verb::post) request.set(bhttp::field::content_type, "application/json");
    request.body() = std::move(body);
    request.prepare_payload();
    auto [write_error, written] = co_await bhttp::async_write(stream_, request, as_tuple_awaitable);
    (void)written;
    if (write_error) throw std::runtime_error("write: " + write_error.message());
    co_return co_await read_answer();
  }

  std::uint16_t remote_port() const { return stream_.socket().remote_endpoint().port(); }

  /// Exchanges completed on this connection.
  std::uint64_t exchanges() const { return exchanges_; }

  /// Ends an exchange in progress (it fails with "operation aborted") and the connection.
  void close() {
    boost::system::error_code ignored;
    stream_.socket().close(ignored);
  }

  /// Sends `request`, already serialised (head and body), and reads the answer.
  asio::awaitable<std::string> exchange_serialized(std::string request) {
    auto [write_error, written] = co_await asio::async_write(stream_, asio::buffer(request), as_tuple_awaitable);
    (void)written;
    if (write_error) throw std::runtime_error("write: " + write_error.message());
    co_return co_await read_answer();
  }

 private:
  asio::awaitable<std::string> read_answer() {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1 << 20);
    auto [read_error, read] = co_await bhttp::async_read(stream_, buffer_, parser, as_tuple_awaitable);
    (void)read;
    if (read_error) throw std::runtime_error("read: " + read_error.message());
    if (parser.get().result_int() != 200) {
      throw std::runtime_error("status " + std::to_string(parser.get().result_int()) + ": " + parser.get().body());
    }
    ++exchanges_;
    co_return std::move(parser.get().body());
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::uint64_t exchanges_ = 0;
};

inline std::string field(const std::string& json, const char* key) {
  return std::string(boost::json::parse(json).as_object().at(key).as_string());
}

// Ids of a session, a model with one completed optim_step, and a sampling session.
struct Fixture {
  std::string session_id;
  std::string completed_request_id;
  std::string sampling_session_id;
};

// What one sample request asks for, written as the SDK writes it: the prompt's token ids joined by commas,
// num_samples, max_tokens (seed 1, temperature 1, no top-k or top-p cut, no prompt logprobs).
class SampleShape {
 public:
  SampleShape() = default;
  SampleShape(std::string prompt_tokens_, std::int64_t num_samples_, std::int64_t max_tokens_)
      : prompt_tokens(std::move(prompt_tokens_)), num_samples(num_samples_), max_tokens(max_tokens_) {}

  std::string prompt_tokens = "11,12,13";
  std::int64_t num_samples = 1;
  std::int64_t max_tokens = 8;
};

// The SDK's traffic shape (the headers of doc/protocol.md#headers, as tinker-cpp sends them), for a
// raw loop doing the same two HTTP exchanges per sample as the SDK: the same headers with values of
// the same length and the same bodies, serialised by appending to one string, as cheaply as a
// hand-written client can. The server's cost per request grows with its header count, so a baseline
// with fewer headers would charge the SDK for the protocol rather than for its own overhead.
class SdkShapedRequests {
 public:
  /// `port`: the server's, for the Host header (the SDK writes host:port).
  /// `shape`: what each sample asks for (the defaults: 3 prompt tokens, one sample of 8 tokens).
  explicit SdkShapedRequests(std::uint16_t port, const SampleShape& shape = SampleShape())
      : host_line_("Host: 127.0.0.1:" + std::to_string(port) + "\r\n"),
        sample_prefix_(R"({"num_samples":)" + std::to_string(shape.num_samples) +
                       R"(,"prompt":{"chunks":[{"tokens":[)" + shape.prompt_tokens +
                       R"(],"type":"encoded_text"}]},"sampling_params":{"max_tokens":)" +
                       std::to_string(shape.max_tokens) +
                       R"(,"seed":1,"temperature":1,"top_k":-1,"top_p":1},"sampling_session_id":")") {}

  /// The asample request as SamplingClient::async_sample sends it.
  std::string sample(const std::string& sampling_session_id, std::int64_t seq_id) {
    body_.assign(sample_prefix_);
    body_ += sampling_session_id;
    body_ += R"(","seq_id":)";
    body_ += std::to_string(seq_id);
    body_ += R"(,"topk_prompt_logprobs":0,"type":"sample"})";
    std::string request = head("/api/v1/asample", "60");
    request += "Accept: application/json\r\nX-Tinker-Sampling-Backpressure: 1\r\n";
    return finish(std::move(request));
  }

  /// The batched long-poll of a sampling session's completions after `cursor` (`/api/v1/retrieve_futures`), as the
  /// SDK's sampler sends it when the server turns the batched result poll on.
  std::string completions_poll(const std::string& sampling_session_id, std::int64_t cursor) {
    body_.assign(R"({"target":{"type":"sampling_session","sampling_session_id":")");
    body_ += sampling_session_id;
    body_ += R"(","cloned_sampler_id":0},"prev_cursor":)";
    body_ += std::to_string(cursor);
    body_ += R"(,"timeout":30})";
    std::string request = head("/api/v1/retrieve_futures", "45");
    request += "Accept: application/json\r\n";
    return finish(std::move(request));
  }

  /// A retrieve_future poll for a sample, as the SDK's future sends it (protobuf accepted).
  std::string poll(const std::string& request_id, int iteration) {
    body_.assign(R"({"request_id":")");
    body_ += request_id;
    body_ += R"(","allow_metadata_only":true})";
    std::string request = head("/api/v1/retrieve_future", "45");
    request += "Accept: application/x-protobuf\r\nX-Tinker-Request-Iteration: ";
    request += std::to_string(iteration);
    request += "\r\nX-Tinker-Request-Type: Sample\r\n";
    if (iteration == 0) request += "X-Tinker-Create-Promise-Roundtrip-Time: 0.000169\r\n";
    return finish(std::move(request));
  }

 private:
  std::string head(std::string_view target, std::string_view read_timeout) {
    std::string request;
    request.reserve(1024);
    request += "POST ";
    request += target;
    request += " HTTP/1.1\r\n";
    request += host_line_;
    // The values of src/http/headers.cpp (standard_headers), copied: the raw loop uses no SDK code.
    request +=
        "User-Agent: tinker-cpp/0.1.0\r\nX-Stainless-Lang: cpp\r\n"
        "X-Stainless-Package-Version: 0.25.0\r\nX-Stainless-OS: Linux\r\nX-Stainless-Arch: x64\r\n"
        "X-Stainless-Runtime: cpp\r\nX-Stainless-Runtime-Version: gcc-12.2.0\r\nX-Stainless-Async: async:asio\r\n"
        "X-API-Key: ";
    request += kApiKey;
    request += "\r\nContent-Type: application/json\r\nX-Idempotency-Key: ";
    append_idempotency_key(request);
    request += "\r\nx-stainless-read-timeout: ";
    request += read_timeout;
    request += "\r\n";
    return request;
  }

  std::string finish(std::string request) {
    request += "x-stainless-retry-count: 0\r\nContent-Length: ";
    request += std::to_string(body_.size());
    request += "\r\n\r\n";
    request += body_;
    return request;
  }

  // Unique per request, in the SDK's form ("tinker-cpp-retry-" and a UUID's 36 characters).
  void append_idempotency_key(std::string& out) {
    char key[64];
    const auto n = ++counter_;
    const int size =
        std::snprintf(key, sizeof key, "tinker-cpp-retry-%08x-0000-4000-8000-%012llx", static_cast<unsigned>(n >> 48),
                      static_cast<unsigned long long>(n & 0xffffffffffffULL));
    out.append(key, static_cast<std::size_t>(size));
  }

  std::string host_line_;
  std::string sample_prefix_;  ///< the asample body up to the sampling session id
  std::string body_;
  std::uint64_t counter_ = 0;
};

/// Polls until the result is ready and returns its body: with the fewest headers (JSON answers),
/// or as the SDK polls when `shape` is given (protobuf answers).
inline asio::awaitable<std::string> complete(Connection& connection, std::string request_id,
                                             SdkShapedRequests* shape = nullptr) {
  const std::string minimal_poll = R"({"request_id":")" + request_id + R"(","allow_metadata_only":false})";
  for (int iteration = 0;; ++iteration) {
    std::string body;
    if (shape != nullptr) {
      body = co_await connection.exchange_serialized(shape->poll(request_id, iteration));
    } else {
      body = co_await connection.exchange(bhttp::verb::post, "/api/v1/retrieve_future", minimal_poll);
    }
    if (body.find("\"try_again\"") == std::string::npos) co_return body;
  }
}

/// Whether the server's client config turns the batched result poll on (`sample_use_retrieve_futures`), read as the
/// SDK reads it when it starts.
inline asio::awaitable<bool> uses_batched_results(Connection& connection) {
  const std::string config =
      co_await connection.exchange(bhttp::verb::post, "/api/v1/client/config", R"({"sdk_version":"0.25.0"})");
  const boost::json::value parsed = boost::json::parse(config);
  const boost::json::value* flag = parsed.as_object().if_contains("sample_use_retrieve_futures");
  co_return flag != nullptr && flag->is_bool() && flag->as_bool();
}

/// The request ids a retrieve_futures answer reports, as views into `answer` (finished and failed alike: either is
/// fetched with retrieve_future, which returns the result or the error), and its cursor. Found by scanning for the
/// keys, as a hand-written client would; the server's request ids have no escapes.
inline std::int64_t reported_request_ids(std::string_view answer, std::vector<std::string_view>& ids) {
  constexpr std::string_view id_key = R"("request_id":")";
  constexpr std::string_view cursor_key = R"("cursor":)";
  ids.clear();
  for (std::size_t at = answer.find(id_key); at != std::string_view::npos; at = answer.find(id_key, at)) {
    const std::size_t begin = at + id_key.size();
    at = answer.find('"', begin);
    if (at == std::string_view::npos) throw std::runtime_error("retrieve_futures answer: unterminated request_id");
    ids.push_back(answer.substr(begin, at - begin));
  }
  const std::size_t at = answer.rfind(cursor_key);
  std::int64_t cursor = 0;
  const char* end = answer.data() + answer.size();
  const char* digits = at == std::string_view::npos ? end : answer.data() + at + cursor_key.size();
  if (std::from_chars(digits, end, cursor).ec != std::errc()) {
    throw std::runtime_error("retrieve_futures answer: no cursor");
  }
  return cursor;
}

inline asio::awaitable<void> prepare(Connection* connection, Fixture* fixture) {
  const std::string session =
      co_await connection->exchange(bhttp::verb::post, "/api/v1/create_session",
                                    R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"})");
  fixture->session_id = field(session, "session_id");
  const std::string ticket = co_await connection->exchange(
      bhttp::verb::post, "/api/v1/create_model",
      R"({"session_id":")" + fixture->session_id +
          R"(","model_seq_id":0,"base_model":"tinker-local/tiny-lm","lora_config":{"rank":8},"type":"create_model"})");
  const std::string model_id = field(co_await complete(*connection, field(ticket, "request_id")), "model_id");
  const std::string optim = co_await connection->exchange(
      bhttp::verb::post, "/api/v1/optim_step",
      R"({"adam_params":{"learning_rate":0.0001},"model_id":")" + model_id + R"(","seq_id":1,"type":"optim_step"})");
  fixture->completed_request_id = field(optim, "request_id");
  co_await complete(*connection, fixture->completed_request_id);
  const std::string sampler = co_await connection->exchange(
      bhttp::verb::post, "/api/v1/create_sampling_session",
      R"({"session_id":")" + fixture->session_id +
          R"(","sampling_session_seq_id":1,"base_model":"tinker-local/tiny-lm","type":"create_sampling_session"})");
  fixture->sampling_session_id = field(sampler, "sampling_session_id");
}

/// An asample body for the sampler, prompt of three tokens, 8 new tokens.
inline std::string sample_body(const std::string& sampling_session_id, std::int64_t seq_id) {
  return R"({"num_samples":1,"prompt":{"chunks":[{"tokens":[11,12,13],"type":"encoded_text"}]},)"
         R"("sampling_params":{"max_tokens":8,"seed":1,"temperature":1.0,"top_k":-1,"top_p":1.0},)"
         R"("sampling_session_id":")" +
         sampling_session_id + R"(","seq_id":)" + std::to_string(seq_id) + R"(,"type":"sample"})";
}

}  // namespace tinker::bench
