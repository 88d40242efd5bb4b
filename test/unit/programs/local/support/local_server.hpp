// tinker-local started in-process on an ephemeral loopback port, with a raw HTTP client and the
// protocol steps every API test needs (session, model, submit, long-poll a future, audit).
//
// Every test gets a fresh data directory; the Hugging Face hub cache (where the server installs
// the tokenizer it trains at first start) is one temporary directory per test process, so the
// tokenizer is trained once and reused by every server of the run.
#pragma once

#include "support/raw_http_client.hpp"
#include "unit/programs/local/support/temp_dir.hpp"
#include "unit/programs/local/support/wire_bodies.hpp"

#include <tinker/local/server.hpp>

#include <gtest/gtest.h>

#include <boost/json/value.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace tinker::local::test {

// The raw client shared with the transport tests (test/support/raw_http_client.hpp).
using tinker::test::HeaderList;
using tinker::test::RawExchange;
using tinker::test::RawHttpClient;
using tinker::test::RawResponse;
using tinker::test::RawResult;

inline constexpr std::string_view test_api_key = "tml-http-api-test-key";
inline constexpr std::string_view tiny_model = "tinker-local/tiny-lm";
inline constexpr std::string_view json_type = "application/json";
inline constexpr std::string_view protobuf_type = "application/x-protobuf";

/// The per-process Hugging Face hub cache shared by every server of the test run (removed at exit).
const std::filesystem::path& shared_hf_hub_cache();
/// Vocabulary size of the tiny tokenizer (loaded from the shared cache).
int tiny_vocab_size();
/// `count` token sequences of `length` tokens cut from the bundled corpus (deterministic).
std::vector<Tokens> corpus_sequences(std::size_t count, std::size_t length);

/// Waits until `server` holds `count` requests to `path` (the target without query) that are not
/// answered yet, such as a long poll or a delayed request: the arrival log (Server::audit) records
/// a request as its serving starts, with status 0 until it is answered. Checks every 5 ms for at
/// most `limit`; false when that never happened.
bool wait_for_unanswered(const Server& server, std::string_view path, std::size_t count = 1,
                         std::chrono::milliseconds limit = std::chrono::seconds(10));

/// Options every test starts from: ephemeral port, the shared hub cache, a short long-poll hold
/// (200 ms) so a pending future answers try_again quickly, quiet logging.
ServerOptions fast_test_options();

/// A started server plus one keep-alive client. Helper methods throw std::runtime_error with the
/// response in the message when the server answers something unexpected, so a test stops there.
class LocalApi {
 public:
  explicit LocalApi(ServerOptions options);
  ~LocalApi();

  Server& server() noexcept { return *server_; }
  RawHttpClient& http() noexcept { return *http_; }
  std::uint16_t port() const;
  /// A second client on its own connection (for concurrency and raw-byte tests).
  std::unique_ptr<RawHttpClient> new_client() const;

  /// Headers every authenticated request carries: X-API-Key (plus `extra`).
  HeaderList auth(const HeaderList& extra = {}) const;
  std::string api_key{test_api_key};

  RawResponse get(std::string_view target, const HeaderList& extra = {});
  RawResponse post(std::string_view target, const boost::json::value& body, const HeaderList& extra = {});
  RawResponse post_raw(std::string_view target, std::string body, std::string_view content_type,
                       const HeaderList& extra = {});
  RawResponse put(std::string_view target, const boost::json::value& body);
  RawResponse del(std::string_view target);

  /// POST create_session; returns session_id.
  std::string create_session();
  /// POST create_model, await the future; checks the result is
  /// {"type":"create_model","model_id":"<session>:train:<model_seq_id>"} and returns model_id.
  std::string create_model(const std::string& session_id, std::int64_t model_seq_id = 0, int rank = 4,
                           std::string_view base_model = tiny_model);
  /// POSTs a future endpoint and returns the ticket's request_id (requires HTTP 200).
  std::string submit(std::string_view target, const boost::json::value& body, const HeaderList& extra = {});
  std::string submit_raw(std::string_view target, std::string body, std::string_view content_type,
                         const HeaderList& extra = {});
  /// One retrieve_future poll.
  RawResponse poll(const std::string& request_id, bool allow_metadata_only = false,
                   std::string_view accept = json_type);
  /// Polls until the answer is neither try_again nor 408 (within `limit`); returns that answer.
  RawResponse await_response(const std::string& request_id, std::string_view accept = json_type,
                             bool allow_metadata_only = false,
                             std::chrono::milliseconds limit = std::chrono::milliseconds(60000));
  /// await_response, then requires a JSON success (no "error" key) and returns it.
  boost::json::value await_json(const std::string& request_id);
  /// submit + await_json.
  boost::json::value call(std::string_view target, const boost::json::value& body);
  /// await_response, then requires {"error", "category"}; returns it.
  boost::json::value await_failure(const std::string& request_id);

  /// GET /_admin/audit.
  boost::json::value admin_audit();

 private:
  std::unique_ptr<Server> server_;
  std::unique_ptr<RawHttpClient> http_;
};

/// Fixture: `options` may be changed before the first `api()` call starts the server.
class LocalServerTest : public ::testing::Test {
 protected:
  LocalServerTest();
  ~LocalServerTest() override;

  LocalApi& api();
  /// Stops the server (if started) and starts a new one on the same data dir with `options`.
  LocalApi& restart();
  void stop();

  TempDir data_dir{"tinker-local-data"};
  ServerOptions options = fast_test_options();

 private:
  std::unique_ptr<LocalApi> api_;
};

}  // namespace tinker::local::test
