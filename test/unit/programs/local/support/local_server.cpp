#include "unit/programs/local/support/local_server.hpp"

#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace tinker::local::test {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

[[noreturn]] void unexpected(std::string_view what, const RawResponse& response) {
  throw std::runtime_error(std::string(what) + ": unexpected answer\n" + response.describe());
}

bool is_try_again(const RawResponse& response) {
  if (response.status == 408) return true;
  if (response.status != 200) return false;
  const auto type = response.header("Content-Type");
  if (!type || type->find("json") == std::string::npos) return false;
  json::error_code ec;
  const json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) return false;
  const json::value* kind = body.get_object().if_contains("type");
  return kind != nullptr && kind->is_string() && kind->get_string() == "try_again";
}

}  // namespace

bool wait_for_unanswered(const Server& server, std::string_view path, std::size_t count,
                         std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const AuditReport report = server.audit();
    const auto unanswered =
        std::count_if(report.requests.begin(), report.requests.end(),
                      [&](const RequestRecord& record) { return record.path == path && record.status == 0; });
    if (static_cast<std::size_t>(unanswered) >= count) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

const fs::path& shared_hf_hub_cache() {
  static const TempDir cache("tinker-local-test-hf-hub");
  return cache.path();
}

int tiny_vocab_size() {
  static const int size = ensure_tiny_tokenizer(shared_hf_hub_cache(), TinyTokenizer::byte_level_bpe)->vocab_size();
  return size;
}

std::vector<Tokens> corpus_sequences(std::size_t count, std::size_t length) {
  const auto tokenizer = ensure_tiny_tokenizer(shared_hf_hub_cache(), TinyTokenizer::byte_level_bpe);
  const std::vector<TokenId> all = tokenizer->encode(bundled_corpus().substr(0, 20000));
  if (all.size() < count * length) throw std::runtime_error("corpus_sequences: the bundled corpus is too short");
  std::vector<Tokens> out;
  for (std::size_t i = 0; i < count; ++i) {
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i * length),
                     all.begin() + static_cast<std::ptrdiff_t>((i + 1) * length));
  }
  return out;
}

ServerOptions fast_test_options() {
  ServerOptions options;
  options.port = 0;
  options.hf_hub_cache = shared_hf_hub_cache();
  options.long_poll_hold = std::chrono::milliseconds(200);
  options.log_level = LogLevel::error;
  options.worker_threads = 2;
  return options;
}

// ---- LocalApi ----------------------------------------------------------------------------------

LocalApi::LocalApi(ServerOptions options) : server_(std::make_unique<Server>(std::move(options))) {
  server_->start();
  http_ = new_client();
}

LocalApi::~LocalApi() {
  http_.reset();
  server_->stop();
}

std::uint16_t LocalApi::port() const {
  return server_->port();
}

std::unique_ptr<RawHttpClient> LocalApi::new_client() const {
  return std::make_unique<RawHttpClient>("127.0.0.1", server_->port());
}

HeaderList LocalApi::auth(const HeaderList& extra) const {
  HeaderList headers{{"X-API-Key", api_key}};
  headers.insert(headers.end(), extra.begin(), extra.end());
  return headers;
}

RawResponse LocalApi::get(std::string_view target, const HeaderList& extra) {
  HeaderList headers = auth(extra);
  headers.emplace_back("Accept", "application/json");
  return http_->request("GET", target, headers);
}

RawResponse LocalApi::post(std::string_view target, const json::value& body, const HeaderList& extra) {
  return post_raw(target, to_text(body), json_type, extra);
}

RawResponse LocalApi::post_raw(std::string_view target, std::string body, std::string_view content_type,
                               const HeaderList& extra) {
  HeaderList headers = auth(extra);
  headers.emplace_back("Content-Type", std::string(content_type));
  return http_->request("POST", target, headers, std::move(body));
}

RawResponse LocalApi::put(std::string_view target, const json::value& body) {
  HeaderList headers = auth({{"Content-Type", "application/json"}});
  return http_->request("PUT", target, headers, to_text(body));
}

RawResponse LocalApi::del(std::string_view target) {
  return http_->request("DELETE", target, auth());
}

std::string LocalApi::create_session() {
  json::object body;
  body["tags"] = json::array{"http-api-test"};
  body["user_metadata"] = json::object{};
  body["sdk_version"] = "0.25.0";
  body["type"] = "create_session";
  const RawResponse response = post("/api/v1/create_session", body);
  if (response.status != 200) unexpected("create_session", response);
  return string_field(response.json(), "session_id");
}

std::string LocalApi::create_model(const std::string& session_id, std::int64_t model_seq_id, int rank,
                                   std::string_view base_model) {
  json::object lora;
  lora["rank"] = rank;
  lora["seed"] = 0;
  lora["train_unembed"] = true;
  lora["train_mlp"] = true;
  lora["train_attn"] = true;
  json::object body;
  body["session_id"] = session_id;
  body["model_seq_id"] = model_seq_id;
  body["base_model"] = base_model;
  body["lora_config"] = std::move(lora);
  body["type"] = "create_model";
  const json::value result = call("/api/v1/create_model", body);
  const std::string expected_id = session_id + ":train:" + std::to_string(model_seq_id);
  if (string_field(result, "model_id") != expected_id || string_field(result, "type") != "create_model") {
    throw std::runtime_error("create_model result " + to_text(result) + " is not for " + expected_id);
  }
  return expected_id;
}

std::string LocalApi::submit(std::string_view target, const json::value& body, const HeaderList& extra) {
  return submit_raw(target, to_text(body), json_type, extra);
}

std::string LocalApi::submit_raw(std::string_view target, std::string body, std::string_view content_type,
                                 const HeaderList& extra) {
  const RawResponse response = post_raw(target, std::move(body), content_type, extra);
  if (response.status != 200) unexpected(target, response);
  return string_field(response.json(), "request_id");
}

RawResponse LocalApi::poll(const std::string& request_id, bool allow_metadata_only, std::string_view accept) {
  json::object body;
  body["request_id"] = request_id;
  body["allow_metadata_only"] = allow_metadata_only;
  HeaderList headers = auth({{"Content-Type", "application/json"}, {"Accept", std::string(accept)}});
  return http_->request("POST", "/api/v1/retrieve_future", headers, to_text(body));
}

RawResponse LocalApi::await_response(const std::string& request_id, std::string_view accept, bool allow_metadata_only,
                                     std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    RawResponse response = poll(request_id, allow_metadata_only, accept);
    if (!is_try_again(response)) return response;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("future " + request_id + " still pending after the limit\n" + response.describe());
    }
  }
}

json::value LocalApi::await_json(const std::string& request_id) {
  const RawResponse response = await_response(request_id);
  if (response.status != 200) unexpected("retrieve_future " + request_id, response);
  json::value result = response.json();
  if (!result.is_object() || result.get_object().contains("error"))
    unexpected("retrieve_future " + request_id, response);
  return result;
}

json::value LocalApi::call(std::string_view target, const json::value& body) {
  return await_json(submit(target, body));
}

json::value LocalApi::await_failure(const std::string& request_id) {
  const RawResponse response = await_response(request_id);
  if (response.status != 200) unexpected("retrieve_future " + request_id, response);
  json::value result = response.json();
  if (!result.is_object() || !result.get_object().contains("error")) {
    unexpected("retrieve_future " + request_id + " (expected a failure)", response);
  }
  return result;
}

json::value LocalApi::admin_audit() {
  const RawResponse response = get("/_admin/audit");
  if (response.status != 200) unexpected("GET /_admin/audit", response);
  return response.json();
}

// ---- LocalServerTest ---------------------------------------------------------------------------

LocalServerTest::LocalServerTest() {
  options.data_dir = data_dir.path();
}

LocalServerTest::~LocalServerTest() {
  stop();
}

LocalApi& LocalServerTest::api() {
  if (!api_) api_ = std::make_unique<LocalApi>(options);
  return *api_;
}

LocalApi& LocalServerTest::restart() {
  stop();
  return api();
}

void LocalServerTest::stop() {
  api_.reset();
}

}  // namespace tinker::local::test
